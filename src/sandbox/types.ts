/** Shapes the sandbox serves; they follow the service interface and its OpenAPI document. */

export interface ContentResources {
  description_markdown_url: string;
  disclaimer_markdown_url: string | null;
  refund_policy_markdown_url: string | null;
  reissuance_policy_markdown_url: string | null;
  terms_buyer_markdown_url: string | null;
  terms_consumer_markdown_url: string | null;
  redemption_instructions_markdown_url: string | null;
  locale: string;
}

interface Expiry {
  date_policy: string | null;
  in_months: number;
  type: string;
}

/** Fields shared by the gift_card and subscription objects. */
export interface PayoutDetailsBase {
  assets: {
    card_image_url: string | null;
    icon_image_url: string | null;
    primary_color: string | null;
  };
  balance_check_url: string | null;
  content_resources: ContentResources;
  expiry: Expiry;
  redeemable_at: string;
  website_url: string | null;
  barcode_format: string | null;
  e_code_usage_type: string;
}

export interface Denominations {
  type: "open" | "fixed";
  minimum_value: string;
  maximum_value: string;
  available_list: string[] | null;
}

export interface SubscriptionPlan {
  length_unit: "DAYS" | "MONTHS";
  length: number;
  name: string;
  price: string;
  subscription_plan_code: string;
}

export interface Product {
  approval_state: string;
  categories: string[];
  code: string;
  countries_redeemable_in: string[];
  currency: string;
  customer_service: { phone_number: string | null; website_url: string | null };
  discount_multiplier: string;
  name: string;
  state: string;
  is_orderable: boolean;
  payout_type: string;
  availability: string;
  gift_card?: PayoutDetailsBase & { denominations: Denominations };
  subscription?: PayoutDetailsBase & { subscription_plans: SubscriptionPlan[] };
  payment?: {
    assets: { icon_image_url: string; primary_color: string };
    denominations: { minimum_value: string; maximum_value: string };
    content_resources: ContentResources;
  };
}

export interface OrderItem {
  id: string;
  /** OpenAPI EmailDistribution, LinkDistribution, RecipientDistribution. */
  distribution_method:
    | { type: "EMAIL"; email_address: string; template_id: string }
    | { type: "PAYOUT_LINK"; template_id: string }
    | {
        type: "RECIPIENT";
        recipient_reference: string;
        email_address: string;
        template_id: string;
      };
  /** OpenAPI SingleProduct, MultipleProduct, PayoutSelectionTemplateDetailed. */
  products:
    | { type: "SINGLE"; value: string }
    | { type: "MULTIPLE"; values: string[] }
    | { type: "TEMPLATE"; template_id: string; values: string[] };
  face_value: string;
  price: string;
  payout: { status: string; status_updated_at: string; url: string; expiry_date: string };
  currency: string;
}

export interface Order {
  id: string;
  status: "PROCESSING" | "COMPLETED" | "FAILED";
  created_at: string;
  completed_at: string | null;
  description: string | null;
  payment_method: { type: "ACCOUNT_BALANCE"; currency: string };
  currency: string;
  total_price: string;
  total_discount: string;
  items: OrderItem[];
  transaction_detail: Record<string, { value: string; fx: null }>;
  metadata: Record<string, string> | null;
}
